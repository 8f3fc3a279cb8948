import next from "eslint-config-next";

const config = [
  ...next,
  { ignores: [".next/**", ".data/**", ".test-data/**", "db/migrations/**", "test-results/**", "playwright-report/**", "next-env.d.ts"] },
];

export default config;
