import type { CodegenConfig } from "@graphql-codegen/cli";

// The schema is read from a running wagraph (introspection needs a token).
const url = process.env.WAGRAPH_URL ?? "http://127.0.0.1:8080/graphql";

const config: CodegenConfig = {
  schema: [{ [url]: { headers: { Authorization: `Bearer ${process.env.WAGRAPH_TOKEN}` } } }],
  documents: ["src/**/*.graphql"],
  generates: {
    "src/generated/graphql.ts": {
      plugins: ["typescript-operations", "typed-document-node"],
      config: {
        // wagraph's custom scalars: Time is an RFC 3339 string, JSON any
        // value. Its IDs are strings.
        scalars: {
          ID: { input: "string", output: "string" },
          Time: { input: "string", output: "string" },
          JSON: { input: "unknown", output: "unknown" },
        },
        strictScalars: true, // a scalar added to the schema and not mapped here fails the run
        useTypeImports: true,
      },
    },
  },
};

export default config;
