import Link from "next/link";
import { getService } from "@/lib/service";
import { issuerFor } from "@/lib/http/context";

export const dynamic = "force-dynamic";

export default async function Home() {
  const { config } = await getService();
  const issuer = issuerFor(config.publicUrl, "demo");
  return (
    <main className="mx-auto max-w-2xl px-6 py-16">
      <h1 className="text-3xl font-semibold tracking-tight">Latchkey</h1>
      <p className="mt-3 text-slate-600">
        Hosted sign-in and OAuth 2.0 / OpenID Connect for your applications. Every workspace has its own issuer.
      </p>
      <section className="mt-10 rounded-xl border border-slate-200 bg-white p-6 shadow-sm">
        <h2 className="text-lg font-medium">Demo workspace</h2>
        <dl className="mt-4 space-y-3 text-sm">
          <div>
            <dt className="text-slate-500">Issuer</dt>
            <dd className="font-mono break-all">{issuer}</dd>
          </div>
          <div>
            <dt className="text-slate-500">Discovery document</dt>
            <dd>
              <Link className="font-mono break-all text-indigo-700 underline" href="/t/demo/.well-known/openid-configuration" prefetch={false}>
                {issuer}/.well-known/openid-configuration
              </Link>
            </dd>
          </div>
          <div>
            <dt className="text-slate-500">Signing keys</dt>
            <dd>
              <Link className="font-mono break-all text-indigo-700 underline" href="/t/demo/.well-known/jwks.json" prefetch={false}>
                {issuer}/.well-known/jwks.json
              </Link>
            </dd>
          </div>
        </dl>
      </section>
      <p className="mt-8 text-sm text-slate-500">
        Integrating an application? Read <span className="font-mono">docs/integration.md</span> in the repository.
      </p>
    </main>
  );
}
