/**
 * Run-time checks of what arrives from the server (request results, notification params, the
 * arguments code lenses pass to commands) before it drives the UI: the combinators the checks
 * are made of.
 *
 * A {@link Check} takes untrusted JSON and returns it typed, or an {@link Invalid} that says
 * where and why it is not of the type (`result.kernels[2].call_line: expected an integer, got
 * null`). Checks are built from small ones ({@link shape}, {@link listOf}, {@link nullable},
 * {@link optional}, …), and {@link shape} takes one check per field of the declared interface:
 * the compiler rejects a missing field and a check that lets through more than its field's type
 * (a check stricter than the type is caught by the tests on recorded answers). Fields not in the
 * type pass through unread. {@link is} turns a check into a type guard where a yes or no is
 * enough.
 *
 * The check of every wire type is generated with the type, from `server/kernel_lens/wire/`
 * (`generated/wire.ts`, by `scripts/gen_wire.py`); `protocol.ts` gives each method its check.
 *
 * Pure (no `vscode`, no protocol types), so it is unit-tested under node, against the server's
 * recorded answers.
 */

/** Why a value is not of the type a {@link Check} expects. */
export class Invalid {
  constructor(
    /** `path: expected …, got …`. */
    readonly reason: string,
  ) {}
}

/**
 * A check of untrusted JSON: `value` typed as a T, or why it is not one.
 *
 * Args:
 *   value: the JSON value.
 *   path: where `value` is, for the reason (`result`, `result.lines[3]`).
 */
export type Check<T> = (value: unknown, path: string) => T | Invalid;

/** The value as a T, or an {@link Invalid} whose reason starts with `what`. */
export function check<T>(c: Check<T>, value: unknown, what = "value"): T | Invalid {
  return c(value, what);
}

/** A type guard from a check, where a yes or no is enough. */
export function is<T>(c: Check<T>): (value: unknown) => value is T {
  return (value: unknown): value is T => !(c(value, "value") instanceof Invalid);
}

function describe(value: unknown): string {
  if (value === undefined) {
    return "nothing";
  }
  const text = JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

function fail(path: string, expected: string, value: unknown): Invalid {
  return new Invalid(`${path}: expected ${expected}, got ${describe(value)}`);
}

/** A check of one JSON type by a test of it. */
function primitive<T>(expected: string, test: (value: unknown) => boolean): Check<T> {
  return (value, path) => (test(value) ? (value as T) : fail(path, expected, value));
}

export const string: Check<string> = primitive("a string", (v) => typeof v === "string");
/** A finite number. */
export const number: Check<number> = primitive(
  "a number",
  (v) => typeof v === "number" && Number.isFinite(v),
);
/** A safe integer. */
export const int: Check<number> = primitive("an integer", (v) => Number.isSafeInteger(v));
export const boolean: Check<boolean> = primitive("true or false", (v) => typeof v === "boolean");

/** Any JSON value at all (a field typed `unknown`). */
export const anything: Check<unknown> = (value) => value;

/** A JSON object (not null, not an array), read as a record. */
export const record: Check<Record<string, unknown>> = primitive(
  "an object",
  (v) => typeof v === "object" && v !== null && !Array.isArray(v),
);

/** One of the given strings. */
export function oneOf<const T extends string>(...values: readonly T[]): Check<T> {
  return primitive(values.map((v) => JSON.stringify(v)).join(" or "), (v) =>
    (values as readonly unknown[]).includes(v),
  );
}

/** null or a `c`. */
export function nullable<T>(c: Check<T>): Check<T | null> {
  return (value, path) => (value === null ? null : c(value, path));
}

/** Absent or a `c` (an optional field). */
export function optional<T>(c: Check<T>): Check<T | undefined> {
  return (value, path) => (value === undefined ? undefined : c(value, path));
}

/** An array of `c`s. */
export function listOf<T>(c: Check<T>): Check<T[]> {
  return (value, path) => {
    if (!Array.isArray(value)) {
      return fail(path, "an array", value);
    }
    for (const [index, item] of value.entries()) {
      const checked = c(item, `${path}[${index}]`);
      if (checked instanceof Invalid) {
        return checked;
      }
    }
    return value as T[];
  };
}

/** An object whose every value is a `c`. */
export function recordOf<T>(c: Check<T>): Check<Record<string, T>> {
  return (value, path) => {
    const checked = record(value, path);
    if (checked instanceof Invalid) {
      return checked;
    }
    for (const [key, item] of Object.entries(checked)) {
      const result = c(item, `${path}.${key}`);
      if (result instanceof Invalid) {
        return result;
      }
    }
    return checked as Record<string, T>;
  };
}

/**
 * One check per field of T, each accepting no more than the field's type (an optional field's
 * check is `optional(…)`, so that absence passes).
 */
export type Fields<T> = { readonly [K in keyof T]-?: Check<T[K]> };

/**
 * An object whose fields pass their checks; it is returned as is, with the fields the checks
 * do not name (not in T) passing through unread.
 */
export function shape<T>(fields: Fields<T>): Check<T> {
  const entries = Object.entries<Check<unknown>>(fields);
  return (value, path) => {
    const checked = record(value, path);
    if (checked instanceof Invalid) {
      return checked;
    }
    for (const [key, c] of entries) {
      const result = c(checked[key], `${path}.${key}`);
      if (result instanceof Invalid) {
        return result;
      }
    }
    return checked as T;
  };
}

/** An array of exactly one value per check, in order (a fixed-length tuple). */
export function tupleOf<T extends unknown[]>(
  ...checks: { readonly [K in keyof T]: Check<T[K]> }
): Check<T> {
  const expected = `an array of ${checks.length}`;
  return (value, path) => {
    if (!Array.isArray(value) || value.length !== checks.length) {
      return fail(path, expected, value);
    }
    for (const [index, c] of checks.entries()) {
      const checked = c(value[index], `${path}[${index}]`);
      if (checked instanceof Invalid) {
        return checked;
      }
    }
    return value as unknown as T;
  };
}
