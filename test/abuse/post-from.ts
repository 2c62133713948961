/** A raw POST from a chosen loopback source address (127.0.0.x is another client). */
import { request } from "node:http";

/** One POST from a chosen loopback source address; resolves status, headers and body. */
export function postFrom(
  url: string,
  localAddress: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, unknown>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: "POST",
      localAddress,
      agent: false,
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...headers,
      },
    });
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}
