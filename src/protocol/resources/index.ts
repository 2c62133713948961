/**
 * Resources: `defineResource`, `defineResourceTemplate`, their contents, and the collection that
 * lists them and tells subscribers of updates.
 *
 * The room's face: what the rest of the package uses of it. Modules outside the room import
 * only this file (scripts/check-layers.ts).
 */

export type {
  ReadCaching,
  Resource,
  ResourceAnnotations,
  ResourceDefinition,
  ResourceFieldsBase,
} from "./define-resource.js";
export { defineResource } from "./define-resource.js";
export type {
  ListedResource,
  ResourceTemplate,
  ResourceTemplateDefinition,
  TemplateLister,
  TemplateListPage,
  VariableCompleter,
} from "./define-resource-template.js";
export { defineResourceTemplate } from "./define-resource-template.js";
export { ResourceCollection } from "./resource-collection.js";
export type {
  BlobResourceContents,
  ResourceContents,
  ResourceReadValue,
  TextResourceContents,
} from "./resource-contents.js";
export { isResourceUri, toContents } from "./resource-contents.js";
export type { ResourceFeatureOptions } from "./resource-methods.js";
export { ResourceFeature } from "./resource-methods.js";
