/**
 * Ports for processes the chaos soak restarts on the same port. A port the OS picks (`listen(0)`)
 * lies in the ephemeral range, from which outgoing connections also take their source ports: while
 * a node or Redis is down, one of the thousands of connections the soak opens may be given its
 * port, and the restart then cannot bind. Ports below that range are never handed out as source
 * ports, so they stay free for the restart.
 */
import { readFileSync } from "node:fs";
import net from "node:net";

/** Lowest port the soak picks from. */
const LOW = 20_000;

/** The lowest ephemeral port (Linux `ip_local_port_range`; IANA's 49152 elsewhere). */
function ephemeralStart(): number {
  try {
    const [low] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8")
      .trim()
      .split(/\s+/);
    const value = Number(low);
    if (Number.isSafeInteger(value) && value > LOW + 1_000) return value;
  } catch {
    // Not Linux: the IANA range.
  }
  return 49_152;
}

/** Whether 127.0.0.1:`port` can be bound right now. */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** A free port below the ephemeral range (random, so parallel runs rarely collide; 200 tries). */
export async function stablePort(): Promise<number> {
  const high = ephemeralStart() - 1;
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = LOW + Math.floor(Math.random() * (high - LOW));
    if (await bindable(port)) return port;
  }
  throw new Error("chaos soak: no free port below the ephemeral range");
}
