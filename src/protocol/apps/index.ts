/**
 * MCP Apps (SEP-1865): `defineApp`, the `ui://` resource it serves and the tool metadata that
 * links a tool to it, and the extension declared to clients that support it.
 *
 * The room's face: what the rest of the package uses of it. Modules outside the room import
 * only this file (scripts/check-layers.ts).
 */

export { appsExtension, supportsMcpApps } from "./apps-extension.js";
export type {
  AppCsp,
  AppDefinition,
  AppPermission,
  AppToolMetaOptions,
  AppToolVisibility,
  McpApp,
} from "./define-app.js";
export {
  APPS_EXTENSION,
  defineApp,
  isAppUri,
  MAX_APP_CSP_ORIGINS,
  MAX_APP_HTML_BYTES,
  MCP_APP_MIME_TYPE,
} from "./define-app.js";
