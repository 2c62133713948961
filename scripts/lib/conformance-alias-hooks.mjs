// Resolve hook for conformance-alias-register.mjs (see there for why it exists).
const ALIASED = /\/node_modules\/conformance-(?:stable|alpha)\//;

export async function resolve(specifier, context, next) {
  const parent = context.parentURL;
  if ((specifier === "fs" || specifier === "node:fs") && parent && ALIASED.test(parent)) {
    const renamed = parent.replace(ALIASED, "/node_modules/@modelcontextprotocol/conformance/");
    return next(specifier, { ...context, parentURL: renamed });
  }
  return next(specifier, context);
}
