/**
 * The shape of an OpenTelemetry `TracerProvider` as the `tracing` option takes it, spelled here
 * without `@opentelemetry/api`'s types: the package is an optional peer, and the public
 * declarations must compile for a user who does not have it.
 */

/** Anything with `getTracer` (an SDK `TracerProvider`). */
export interface TracerProviderLike {
  getTracer(name: string, version?: string): unknown;
}
