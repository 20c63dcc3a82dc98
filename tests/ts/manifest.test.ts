/**
 * package.json's contributions against the code: settings and their defaults, commands,
 * activation events and Restricted Mode's restricted settings.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import { Commands, LINKED_LINE_COLOR } from "../../extension/constants";
import { DEFAULTS, RESTART_KEYS, SECTION, type SettingKey } from "../../extension/settings";
import { ClientCommands, ServerCommands } from "../../extension/protocol";
import {
  CLIENT_COMMANDS_WITHOUT_ARGUMENT,
  CLIENT_COMMAND_CHECKS,
  CMD_MORE_ACTIONS,
} from "../../extension/generated/wire";
import { REPORT_PANEL_TYPE } from "../../extension/report/viewTypes";

interface Manifest {
  main: string;
  engines: { vscode: string };
  activationEvents: string[];
  extensionDependencies?: string[];
  capabilities: { untrustedWorkspaces: { supported: string; restrictedConfigurations: string[] } };
  contributes: {
    commands: { command: string; title: string; category: string; icon?: string }[];
    menus: Record<string, { command: string; when?: string; group?: string }[]>;
    configuration: {
      properties: Record<string, { default: unknown; markdownDescription?: string }>;
    };
    colors?: { id: string; description: string; defaults: Record<string, string> }[];
  };
}

const ROOT = path.resolve(__dirname, "..", "..");
const manifest = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as Manifest;

const EXPECTED_DEFAULTS: Record<SettingKey, unknown> = {
  python: DEFAULTS.python,
  agentCommand: DEFAULTS.agentCommand,
  timeoutSeconds: DEFAULTS.timeoutSeconds,
  compileTimeoutSeconds: DEFAULTS.compileTimeoutSeconds,
  "timing.warmupMs": DEFAULTS.timing.warmupMs,
  "timing.budgetMs": DEFAULTS.timing.budgetMs,
  "timing.reps": DEFAULTS.timing.reps,
  "lenses.showAll": DEFAULTS.lenses.showAll,
  profileMemory: DEFAULTS.profileMemory,
  attributeInPackages: DEFAULTS.attributeInPackages,
  "distributed.nprocPerNode": DEFAULTS.distributed.nprocPerNode,
};

describe("package.json", () => {
  it("contributes every setting, with settings.ts's default and a description", () => {
    const properties = manifest.contributes.configuration.properties;
    assert.deepEqual(
      Object.keys(properties).sort(),
      Object.keys(EXPECTED_DEFAULTS)
        .map((key) => `${SECTION}.${key}`)
        .sort(),
    );
    for (const [key, value] of Object.entries(EXPECTED_DEFAULTS)) {
      const property = properties[`${SECTION}.${key}`];
      assert.deepEqual(property?.default, value, key);
      assert.ok((property?.markdownDescription ?? "").length > 20, `${key} has no description`);
    }
  });

  it("restricts exactly the settings that restart the server (they name programs to run)", () => {
    assert.equal(manifest.capabilities.untrustedWorkspaces.supported, "limited");
    assert.deepEqual(
      manifest.capabilities.untrustedWorkspaces.restrictedConfigurations,
      RESTART_KEYS.map((key) => `${SECTION}.${key}`),
    );
  });

  it("contributes the extension's commands, in the Kernel Lens category, with icons", () => {
    const commands = manifest.contributes.commands;
    assert.deepEqual(commands.map((c) => c.command).sort(), Object.values(Commands).sort());
    for (const command of commands) {
      assert.equal(command.category, "Kernel Lens");
      assert.match(command.icon ?? "", /^\$\([a-z-]+\)$/);
    }
  });

  it("does not contribute the server's commands (vscode-languageclient registers them)", () => {
    const contributed = manifest.contributes.commands.map((c) => c.command);
    for (const id of Object.values(ServerCommands)) {
      assert.ok(!contributed.includes(id), id);
    }
  });

  it("activates on Python and on each command", () => {
    assert.deepEqual(manifest.activationEvents, [
      "onLanguage:python",
      ...Object.values(Commands).map((id) => `onCommand:${id}`),
      // A Debug Kernel launch of launch.json (the kernelLens debug type) before any command.
      "onDebugResolve:kernelLens",
      // The report panel's serializer restores it after Reload Window.
      `onWebviewPanel:${REPORT_PANEL_TYPE}`,
    ]);
  });

  it("puts Profile Function at Cursor in the editor context menu for Python", () => {
    const entries = manifest.contributes.menus["editor/context"] ?? [];
    const entry = entries.find((e) => e.command === Commands.profileAtCursor);
    assert.match(entry?.when ?? "", /editorLangId == python/);
  });

  it("contributes every client command of the wire but the `…` lens's own", () => {
    // The wire's client commands (generated from wire/lsp.py): those a server's lens or action
    // carries and the extension registers. Each is in the palette's list, with its title, but
    // `kernelLens.moreActions`, whose argument is the row's actions (nothing to run without).
    const contributed = manifest.contributes.commands.map((c) => c.command);
    const wire = [...Object.keys(CLIENT_COMMAND_CHECKS), ...CLIENT_COMMANDS_WITHOUT_ARGUMENT];
    assert.ok(wire.includes(CMD_MORE_ACTIONS));
    for (const id of wire) {
      assert.equal(contributed.includes(id), id !== CMD_MORE_ACTIONS, id);
    }
    // And the extension's own names for them are the wire's.
    for (const id of wire.filter((c) => c !== CMD_MORE_ACTIONS)) {
      assert.ok(Object.values<string>(ClientCommands).includes(id), id);
    }
  });

  it("contributes the lens commands the extension registers itself", () => {
    for (const id of Object.values(ClientCommands)) {
      assert.ok(Object.values<string>(Commands).includes(id), id);
    }
  });

  it("offers Show Generated Code and Show Assembly in Python editors and in the views", () => {
    const context = manifest.contributes.menus["editor/context"] ?? [];
    const generated = context.find((e) => e.command === Commands.showGeneratedCode);
    assert.match(generated?.when ?? "", /editorLangId == python/);
    const assembly = context.find((e) => e.command === Commands.showAssembly);
    assert.match(assembly?.when ?? "", /editorLangId == python/);
    const title = manifest.contributes.menus["editor/title"] ?? [];
    for (const id of [Commands.showGeneratedCode, Commands.showAssembly]) {
      const entry = title.find((e) => e.command === id);
      assert.match(entry?.when ?? "", /resourceScheme == kernel-lens/, id);
      assert.equal(entry?.group, "navigation", id);
    }
  });

  it("offers load_inline's file picker in its views only, and Show Assembly in the others", () => {
    const title = manifest.contributes.menus["editor/title"] ?? [];
    const inline = title.find((e) => e.command === Commands.openInlineFile);
    // viewUri puts a load_inline module's files under /<source file>/load_inline/.
    const inViews =
      "resourceScheme == kernel-lens && resourcePath =~ /^\\/[^\\/]+\\/load_inline\\//";
    assert.equal(inline?.when, inViews);
    assert.equal(inline?.group, "navigation");
    const assembly = title.find((e) => e.command === Commands.showAssembly);
    assert.ok(assembly?.when?.endsWith(" && !(resourcePath =~ /^\\/[^\\/]+\\/load_inline\\//)"));
    const palette = manifest.contributes.menus["commandPalette"] ?? [];
    const show = palette.find((e) => e.command === Commands.showInlineExtension);
    assert.equal(show?.when, "editorLangId == python");
    assert.equal(palette.find((e) => e.command === Commands.openInlineFile)?.when, inViews);
  });

  it("contributes the linked-line colour for every kind of theme", () => {
    const color = manifest.contributes.colors?.find((c) => c.id === LINKED_LINE_COLOR);
    assert.ok(color !== undefined, LINKED_LINE_COLOR);
    assert.deepEqual(Object.keys(color.defaults).sort(), [
      "dark",
      "highContrast",
      "highContrastLight",
      "light",
    ]);
    assert.ok(color.description.length > 20);
  });

  it("runs the bundle, on VS Code 1.90 or later, without requiring the Python extension", () => {
    assert.equal(manifest.main, "./dist/extension.js");
    assert.equal(manifest.engines.vscode, "^1.90.0");
    assert.equal(manifest.extensionDependencies, undefined);
  });
});
