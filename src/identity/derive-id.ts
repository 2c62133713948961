/**
 * Turns whatever an authenticator returns into a principal id: a string, or `null` for
 * "anonymous". The id becomes part of a scope (`principal:<id>`), so only values that name one
 * identity unambiguously produce an id.
 */

/** Bound on prototype-chain walks, so a hostile Proxy cannot make us loop. */
const MAX_PROTOTYPE_DEPTH = 32;

/**
 * Derives a principal id:
 * - a string → itself;
 * - a safe integer → its decimal text (`42` → `"42"`), so `42` and `"42"` are one principal;
 * - a plain object (prototype `Object.prototype` or `null`) → the value of its first present
 *   own key among `id`, `sub`, which must itself be a string or a safe integer (`{ id: {} }`
 *   is `null`; `sub` is not consulted then);
 * - a class instance → `<ClassName>:<id>` using `id`, or `sub` when `id` is null, undefined
 *   or false (`new User(42)` → `"User:42"`), so two classes with the same id never collide;
 * - everything else → `null`: booleans, null, undefined, non-integer numbers, bigints beyond
 *   the safe range, symbols (their description does not identify them),
 *   functions, arrays, objects without an id, anonymous classes.
 *
 * Never throws: a throwing getter or Proxy trap yields `null`.
 *
 * @example
 * ```ts
 * deriveId({ id: 7 }); // "7"
 * deriveId({ exp: 1 }); // null
 * ```
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

/** A string as is, a safe integer as decimal text, anything else null. */
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
