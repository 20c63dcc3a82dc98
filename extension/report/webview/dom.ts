/**
 * Small DOM helpers for the report views. Text always goes in through `textContent` (kernel
 * names are full of `<`, `>` and `&`); nothing here takes HTML. Every text, tooltip, attribute
 * and string child passes through {@link noBidi}: a stored string's bidi controls are shown,
 * not obeyed.
 */
import { noBidi } from "./format";

/** Options of {@link el}. */
export interface ElOptions {
  className?: string;
  text?: string;
  /** The native tooltip (the `title` property). */
  title?: string;
  /** Attributes other than `style` (the CSP allows no inline style). */
  attrs?: Record<string, string>;
  onClick?: (event: MouseEvent) => void;
}

type Child = Node | string | null | undefined | false;

/** A new element with text, attributes and children (strings become text nodes). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  options: ElOptions = {},
  children: readonly Child[] = [],
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (options.className !== undefined) {
    node.className = options.className;
  }
  if (options.text !== undefined) {
    node.textContent = noBidi(options.text);
  }
  if (options.title !== undefined) {
    node.title = noBidi(options.title);
  }
  for (const [name, value] of Object.entries(options.attrs ?? {})) {
    if (name.toLowerCase() === "style" || name.toLowerCase().startsWith("on")) {
      throw new Error(`el: attribute ${name} is not allowed`);
    }
    node.setAttribute(name, noBidi(value));
  }
  const onClick = options.onClick;
  if (onClick !== undefined) {
    (node as HTMLElement).addEventListener("click", onClick);
  }
  for (const child of children) {
    if (child instanceof Node) {
      node.append(child);
    } else if (typeof child === "string") {
      node.append(document.createTextNode(noBidi(child)));
    }
  }
  return node;
}

/** A button; `action` tags it so that it is disabled while that kind of action runs. */
export function button(
  label: string,
  onClick: () => void,
  options: { primary?: boolean; action?: string; title?: string } = {},
): HTMLButtonElement {
  const node = el("button", {
    className: options.primary === true ? "primary" : "secondary",
    text: label,
    attrs: {
      type: "button",
      ...(options.action === undefined ? {} : { "data-action": options.action }),
    },
    onClick: () => onClick(),
  });
  if (options.title !== undefined) {
    node.title = noBidi(options.title);
  }
  return node;
}

/** A horizontal bar showing `pct` percent (0..100), with its label. */
export function bar(pct: number | null, label: string, className = ""): HTMLElement {
  const fill = el("div", { className: `fill ${className}` });
  fill.style.width = `${Math.max(0, Math.min(100, pct ?? 0))}%`;
  return el("div", { className: "bar", attrs: { role: "img", "aria-label": label } }, [
    fill,
    el("span", { className: "bar-label", text: label }),
  ]);
}

/** The value of a CSS variable on the body (theme colours), trimmed; `fallback` when unset. */
export function cssVar(name: string, fallback = ""): string {
  const value = getComputedStyle(document.body).getPropertyValue(name).trim();
  return value === "" ? fallback : value;
}

/** A table with a header row; `rows` are lists of cells (strings or nodes). */
export function table(
  headers: readonly string[],
  rows: readonly (readonly Child[])[],
  className = "",
): HTMLTableElement {
  return el("table", { className }, [
    el("thead", {}, [
      el(
        "tr",
        {},
        headers.map((h) => el("th", { text: h })),
      ),
    ]),
    el(
      "tbody",
      {},
      rows.map((cells) =>
        el(
          "tr",
          {},
          cells.map((c) => el("td", {}, [c])),
        ),
      ),
    ),
  ]);
}

/** The last path segment of a URI or path. */
export function baseName(uriOrPath: string): string {
  const clean = uriOrPath.replace(/[?#].*$/, "");
  const name = clean.split(/[\\/]/).pop() ?? clean;
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}
