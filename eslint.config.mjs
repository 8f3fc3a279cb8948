import next from "eslint-config-next";

// The import rules (lib/ framework-free, folders as a DAG, no cycles, components/ free of the
// console's rules) are dependency-cruiser's: .dependency-cruiser.cjs, run by `npm run lint` after ESLint.
const config = [
  ...next,
  { ignores: ["**/.next/**", ".data/**", ".test-data/**", "db/migrations/**", "test-results/**", "playwright-report/**", "next-env.d.ts"] },
];

export default config;
