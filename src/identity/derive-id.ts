/** Bound on prototype-chain walks, so a hostile Proxy cannot make us loop. */
const MAX_PROTOTYPE_DEPTH = 32;

/**
 * A principal id from whatever an authenticator returned, or `null` (anonymous). The id keys a
 * `principal:` scope, so only values naming one identity unambiguously produce one:
 * - a string → itself; a safe integer → its decimal text (`42` and `"42"` are one principal);
 * - a plain object → its first present own key among `id`, `sub`, if a string or safe integer;
 * - a class instance → `<ClassName>:<id>` (`id`, else `sub`), so two classes never collide;
 * - anything else (booleans, symbols, arrays, anonymous classes, …) → `null`.
 * Never throws: a throwing getter or Proxy trap yields `null`.
 */
export function deriveId(value: unknown): string | null {
  try {
    const direct = scalar(value);
    if (direct !== null) return direct;
    if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
    const proto = Object.getPrototypeOf(value) as object | null;
    if (proto === Object.prototype || proto === null) {
      // First present key wins, so a bad `id` is never rescued by `sub`: { id: {}, sub: "x" } → null.
      if (Object.hasOwn(value, "id")) return scalar((value as { id: unknown }).id);
      if (Object.hasOwn(value, "sub")) return scalar((value as { sub: unknown }).sub);
      return null;
    }
    const name = className(proto);
    if (name === null) return null;
    let key = classProperty(value, "id");
    if (key === undefined || key === null || key === false) key = classProperty(value, "sub");
    const id = scalar(key);
    return id === null ? null : `${name}:${id}`;
  } catch {
    return null;
  }
}

function scalar(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (typeof value === "number" && Number.isSafeInteger(value)) return String(value);
  if (typeof value === "bigint") {
    const n = Number(value);
    return Number.isSafeInteger(n) ? value.toString() : null;
  }
  return null;
}

function className(proto: object): string | null {
  const ctor: unknown = Object.getOwnPropertyDescriptor(proto, "constructor")?.value;
  if (typeof ctor !== "function") return null;
  const name: unknown = Object.getOwnPropertyDescriptor(ctor, "name")?.value;
  return typeof name === "string" && name !== "" ? name : null;
}

/**
 * Reads `key` from a class instance, own or defined by its class (a getter), but never from
 * `Object.prototype`, so a polluted `Object.prototype.id` cannot give every instance one id.
 */
function classProperty(value: object, key: string): unknown {
  let holder: object | null = value;
  for (let depth = 0; holder !== null && depth < MAX_PROTOTYPE_DEPTH; depth++) {
    if (holder === Object.prototype) return undefined;
    if (Object.hasOwn(holder, key)) return Reflect.get(value, key);
    holder = Object.getPrototypeOf(holder) as object | null;
  }
  return undefined;
}
