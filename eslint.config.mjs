// ESLint flat config: typescript-eslint's type-checked recommended rules for the extension
// and its unit tests, plus the house rules (strict equality, no console: the extension logs
// to its LogOutputChannel). Run with --max-warnings=0 by `npm run lint`.
import js from "@eslint/js";
import { defineConfig } from "eslint/config";
import tseslint from "typescript-eslint";

export default defineConfig(
  { ignores: ["dist/**", "out/**", "bundled/**", "node_modules/**", ".venv/**"] },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      eqeqeq: ["error", "always"],
      "no-console": "error",
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
      // Notifications go through extension/notify.ts, which makes their text inert (no link).
      "no-restricted-properties": [
        "error",
        ...["showInformationMessage", "showWarningMessage", "showErrorMessage", "withProgress"].map(
          (property) => ({ property, message: "use extension/notify.ts (its text is made inert)" }),
        ),
      ],
    },
  },
  {
    // node:test's describe/it return promises that the runner itself awaits.
    files: ["tests/ts/**/*.ts"],
    rules: {
      "@typescript-eslint/no-floating-promises": [
        "error",
        {
          allowForKnownSafeCalls: [
            { from: "package", package: "node:test", name: ["describe", "it", "test"] },
          ],
        },
      ],
    },
  },
  {
    // Build scripts are plain ESM outside the TypeScript project; they may print.
    files: ["**/*.mjs"],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: { process: "readonly", console: "readonly" } },
    rules: { "no-console": "off" },
  },
);
