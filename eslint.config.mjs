import next from "eslint-config-next";

export default [
  ...next,
  { ignores: [".next/**", ".data/**", "db/migrations/**", "test-results/**", "playwright-report/**", "next-env.d.ts"] },
];
