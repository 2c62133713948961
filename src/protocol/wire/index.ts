/**
 * The wire: JSON-RPC messages and their classification, the protocol eras and versions, the
 * 2026-07-28 request envelope and its parameter headers, list cursors, content-block rules, the
 * schemas that describe and check what crosses it (any Standard Schema library), and the sink
 * through which a transport carries one exchange's messages. Needs nothing else of the
 * protocol layer.
 *
 * The room's face: what the rest of the package uses of it. Modules outside the room import
 * only this file (scripts/check-layers.ts).
 */

export type { ContentBlockRules } from "./content-blocks.js";
export { checkPromptMessage } from "./content-blocks.js";
export type { EraClassification } from "./era.js";
export { classifyEra } from "./era.js";
export type { Listed } from "./intrusive-list.js";
export { IntrusiveList } from "./intrusive-list.js";
export type { ClassifiedMessage, JsonRpcNotification, JsonRpcRequest } from "./json-rpc.js";
export {
  cancelledResponseJson,
  classifyMessage,
  errorResponseJson,
  internalErrorJson,
  isPlainObject,
  notificationJson,
  successResponseJson,
  successResponseJsonFor,
} from "./json-rpc.js";
export type { ListKind } from "./list-cursor.js";
export { ListCursors } from "./list-cursor.js";
export type { ModernEnvelope, ModernHeaders, PresentedParamHeaders } from "./modern-envelope.js";
export {
  checkModernRequest,
  decodeHeaderValue,
  inlineModernHeaders,
  META_CLIENT_CAPABILITIES,
  META_LOG_LEVEL,
  META_PROTOCOL_VERSION,
  META_SERVER_INFO,
  missingEnvelopeJson,
  modernClaim,
  presentedParamHeaders,
} from "./modern-envelope.js";
export type { ParamHeader } from "./param-headers.js";
export { checkParamHeaders, paramHeadersOf } from "./param-headers.js";
export type { ResponseSink, SinkListener } from "./response-sink.js";
export type {
  JsonSchemaObject,
  SchemaAdapter,
  SchemaIssue,
  SchemaOutcome,
  SchemaSide,
} from "./schema-adapter.js";
export { adaptSchema, isStandardSchema, looksLikeForeignSchema } from "./schema-adapter.js";
export {
  ALL_PROTOCOL_VERSIONS,
  isSupportedProtocolVersion,
  looksModernVersion,
  MODERN_PROTOCOL_VERSIONS,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "./versions.js";
export type { StandardSchemaWithJson } from "./with-json-schema.js";
export { withJsonSchema } from "./with-json-schema.js";
