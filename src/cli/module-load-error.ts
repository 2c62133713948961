/** The user's module could not be loaded, or exports nothing servable (the CLI exits 2). */
export class ModuleLoadError extends Error {
  override readonly name = "ModuleLoadError";
}
