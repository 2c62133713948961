/**
 * Era classification: which protocol era a POST belongs to, decided once, body first
 * (https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning). The transport first looks for the modern claim in the body
 * (`modernClaim`, modern-envelope.ts): a request whose `params._meta` carries
 * `io.modelcontextprotocol/protocolVersion` is a 2026-07-28 one. Without a claim, the
 * `MCP-Protocol-Version` header decides here between the 2025 era and a refusal.
 */
import { ErrorCode } from "../../errors.js";
import { reflectText } from "../../reflect.js";
import { errorResponseJson } from "./json-rpc.js";
import { isSupportedProtocolVersion, SUPPORTED_PROTOCOL_VERSIONS } from "./versions.js";

/** The outcome of classifying one message. */
export type EraClassification =
  | { readonly era: "2025" }
  | { readonly era: "rejected"; readonly status: number; readonly json: string };

const LEGACY: EraClassification = Object.freeze({ era: "2025" });

/**
 * Classifies a message by its `MCP-Protocol-Version` header: absent (a server SHOULD then assume
 * 2025-03-26) or a supported 2025 revision → the 2025 era; any other value → 400
 * (https://modelcontextprotocol.io/specification/2025-11-25/basic/transports, "Protocol Version Header").
 *
 * @example
 * ```ts
 * classifyEra(req.headers["mcp-protocol-version"]).era; // "2025"
 * ```
 */
export function classifyEra(protocolVersionHeader: string | undefined): EraClassification {
  if (protocolVersionHeader === undefined || isSupportedProtocolVersion(protocolVersionHeader)) {
    return LEGACY;
  }
  const requested = reflectText(protocolVersionHeader, 40);
  return {
    era: "rejected",
    status: 400,
    json: errorResponseJson(
      null,
      ErrorCode.InvalidRequest,
      `Unsupported protocol version: ${requested}. Supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")}`,
      { supported: SUPPORTED_PROTOCOL_VERSIONS, requested },
    ),
  };
}
