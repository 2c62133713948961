/**
 * The MCP Apps extension (`io.modelcontextprotocol/ui`) on the extension seam: no methods of its
 * own (the view talks to the host, and the host to the server with `resources/read` and
 * `tools/call`), only its declaration, negotiated. The client declares
 * `{ mimeTypes: ["text/html;profile=mcp-app", …] }` (MCP Apps specification 2026-01-26,
 * "Client<>Server Capability Negotiation", `mimeTypes` REQUIRED:
 * https://github.com/modelcontextprotocol/ext-apps/blob/main/specification/2026-01-26/apps.mdx;
 * 2026-07-28 per request in `_meta`, 2025-11-25 in `initialize`: SEP-2133, "Negotiation",
 * https://modelcontextprotocol.io/seps/2133-extensions); the server then declares the extension
 * with empty settings (docs/extensions/overview, "Server Capabilities":
 * https://modelcontextprotocol.io/extensions/overview#server-capabilities) in `server/discover`
 * and the `initialize` result, and to no other client.
 */
import { defineExtension, type Extension, type JsonObject } from "../calls/index.js";
import { APPS_EXTENSION, MCP_APP_MIME_TYPE } from "./define-app.js";

/** Whether a client's declaration of the extension names the MCP App HTML profile. */
export function supportsMcpApps(clientSettings: JsonObject | null): boolean {
  const mimeTypes = clientSettings?.mimeTypes;
  return Array.isArray(mimeTypes) && mimeTypes.includes(MCP_APP_MIME_TYPE);
}

/**
 * The MCP Apps extension: give it to `createMcpServer({ extensions })` with the apps' resources.
 *
 * @example
 * ```ts
 * createMcpServer({ tools: [roll], resources: [dice.resource], extensions: [appsExtension] });
 * ```
 */
export const appsExtension: Extension = defineExtension({
  id: APPS_EXTENSION,
  declareWhen: supportsMcpApps,
});
