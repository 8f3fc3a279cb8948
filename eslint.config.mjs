import next from "eslint-config-next";

/** lib/ is the service itself, framework-free and testable with plain Requests: no Next, no React, no app/ or components/. */
const frameworkFree = {
  files: ["lib/**/*.{ts,tsx}"],
  rules: {
    "no-restricted-imports": [
      "error",
      {
        paths: [
          { name: "next", message: "lib/ is framework-free: Next belongs in app/." },
          { name: "react", message: "lib/ is framework-free: React belongs in components/ and app/." },
          { name: "react-dom", message: "lib/ is framework-free: React belongs in components/ and app/." },
        ],
        patterns: [
          { group: ["next/*", "react/*", "react-dom/*"], message: "lib/ is framework-free: Next and React belong in app/ and components/." },
          { group: ["@/app/*", "@/components/*", "**/app/*", "**/components/*"], message: "lib/ never imports from app/ or components/." },
        ],
      },
    ],
  },
};

const config = [
  ...next,
  frameworkFree,
  { ignores: [".next/**", ".data/**", ".test-data/**", "db/migrations/**", "test-results/**", "playwright-report/**", "next-env.d.ts"] },
];

export default config;
