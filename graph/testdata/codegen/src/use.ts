// Uses the generated types as a client would: a typed document, its
// variables and its result, each scalar as the config maps it. tsc --strict
// must accept it, and refuse what the schema forbids (the @ts-expect-error
// lines fail the check when their line compiles).
import type { ResultOf, VariablesOf } from "@graphql-typed-document-node/core";
import {
  CreateSessionDocument,
  EventsDocument,
  SessionsDocument,
  SessionStatusDocument,
  type SessionStatus,
} from "./generated/graphql";

export async function run(url: string, token: string): Promise<string[]> {
  async function gql<R, V>(doc: { __apiType?: (v: V) => R } & object, variables: V): Promise<R> {
    const { print } = await import("graphql");
    const res = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: print(doc as never), variables }),
    });
    const body = (await res.json()) as { data: R; errors?: { message: string }[] };
    if (body.errors?.length) throw new Error(body.errors[0].message);
    return body.data;
  }

  const created: ResultOf<typeof CreateSessionDocument> = await gql(CreateSessionDocument, { name: "codegen" });
  const token2: string = created.createSession.token;

  const list = await gql(SessionsDocument, {});
  const lines = list.sessions.map((s) => {
    const when: string = s.createdAt; // Time is a string
    const status: SessionStatus = s.status;
    const connected: string | null | undefined = s.connectedAt;
    return `${s.name} ${status} ${when} ${connected ?? "never"}`;
  });

  const vars: VariablesOf<typeof EventsDocument> = { sessionId: created.createSession.session.id };
  const events = await gql(EventsDocument, vars);
  for (const e of events.events.edges) {
    const data: unknown = e.node.data; // JSON is unknown: narrowed before use
    if (typeof data === "object" && data !== null) lines.push(`${e.node.kind} ${Object.keys(data).join(",")}`);
    // @ts-expect-error JSON is unknown, not any
    lines.push(e.node.data.anything);
  }

  const sub: VariablesOf<typeof SessionStatusDocument> = { id: created.createSession.session.id };
  // @ts-expect-error id is required
  const missing: VariablesOf<typeof SessionStatusDocument> = {};
  // @ts-expect-error status is an enum of the schema's values
  const wrong: SessionStatus = "ONLINE";

  return [...lines, token2.slice(0, 4), sub.id, String(missing), wrong];
}
