// ESLint's recommended rules for the JavaScript pyuprof ships and tests: the flame graph's
// script (user/output/assets/flamegraph.js, an old-style browser script inside an SVG) and this
// directory's browser test (an ES module run by node). Run from the repository's root:
//   tests/browser/node_modules/.bin/eslint -c tests/browser/eslint.config.js
// (tests/flamegraph.bats does, and fails on any finding).
import js from '@eslint/js';

// the browser's globals either uses (the test's page.evaluate callbacks run in the page)
const browser = {
  document: 'readonly', window: 'readonly', DOMParser: 'readonly', getComputedStyle: 'readonly',
  Image: 'readonly',
};
const node = {
  process: 'readonly', console: 'readonly', URL: 'readonly', Buffer: 'readonly',
  setTimeout: 'readonly', clearTimeout: 'readonly',
};

export default [
  js.configs.recommended,
  {
    files: ['user/output/assets/flamegraph.js'],
    languageOptions: { ecmaVersion: 2015, sourceType: 'script', globals: browser },
  },
  {
    files: ['tests/browser/*.mjs'],
    languageOptions: { ecmaVersion: 2022, sourceType: 'module', globals: { ...node, ...browser } },
  },
];
