import Link from "next/link";
import { getService } from "@/lib/service";
import { issuerFor } from "@/lib/http/context";
import { DEMO_BASE_PATH, demoUnavailable } from "@/lib/demo/serve";
import { DEMO_USER, demoSignInStillWorks } from "@/lib/workspaces/demo";

export const dynamic = "force-dynamic";

export default async function Home() {
  const service = await getService();
  const issuer = issuerFor(service.config.publicUrl, "demo");
  const unavailable = await demoUnavailable(service);
  const credentials = !unavailable && (await demoSignInStillWorks(service.db));
  return (
    <main className="mx-auto max-w-2xl px-6 py-16">
      <h1 className="text-3xl font-semibold tracking-tight">Latchkey</h1>
      <p className="mt-3 text-slate-600">
        Hosted sign-in and OAuth 2.0 / OpenID Connect for your applications. Every workspace has its own issuer.
      </p>

      <section aria-labelledby="try-it" className="mt-10 rounded-xl border border-slate-200 bg-white p-6 shadow-sm">
        <h2 id="try-it" className="text-lg font-medium">
          Try it
        </h2>
        {unavailable ? (
          <p className="mt-3 text-sm text-slate-700">{unavailable}</p>
        ) : (
          <>
            <p className="mt-3 text-sm text-slate-700">
              A small demo application served by this server signs you in through Latchkey&apos;s hosted page, then shows who signed in, the ID token&apos;s
              claims, UserInfo and the session check, with buttons to refresh, revoke and sign out.
            </p>
            {credentials ? (
              <p className="mt-3 text-sm text-slate-700">
                Sign in as <span className="font-mono">{DEMO_USER.email}</span> with the password <span className="font-mono">{DEMO_USER.password}</span>.
              </p>
            ) : null}
            <a
              href={DEMO_BASE_PATH}
              className="mt-5 inline-block rounded-lg bg-indigo-700 px-5 py-3 font-medium text-white hover:bg-indigo-800 focus-visible:outline-3 focus-visible:outline-offset-2 focus-visible:outline-amber-500"
            >
              Sign in to the demo application
            </a>
          </>
        )}
      </section>

      <section aria-labelledby="demo-workspace" className="mt-6 rounded-xl border border-slate-200 bg-white p-6 shadow-sm">
        <h2 id="demo-workspace" className="text-lg font-medium">
          Demo workspace
        </h2>
        <dl className="mt-4 space-y-3 text-sm">
          <div>
            <dt className="text-slate-600">Issuer</dt>
            <dd className="font-mono break-all">{issuer}</dd>
          </div>
          <div>
            <dt className="text-slate-600">Discovery document</dt>
            <dd>
              <Link className="font-mono break-all text-indigo-700 underline" href="/t/demo/.well-known/openid-configuration" prefetch={false}>
                {issuer}/.well-known/openid-configuration
              </Link>
            </dd>
          </div>
          <div>
            <dt className="text-slate-600">Signing keys</dt>
            <dd>
              <Link className="font-mono break-all text-indigo-700 underline" href="/t/demo/.well-known/jwks.json" prefetch={false}>
                {issuer}/.well-known/jwks.json
              </Link>
            </dd>
          </div>
        </dl>
      </section>

      <section aria-labelledby="administer" className="mt-6 rounded-xl border border-slate-200 bg-white p-6 shadow-sm">
        <h2 id="administer" className="text-lg font-medium">
          Administer
        </h2>
        <p className="mt-3 text-sm text-slate-700">
          <Link className="text-indigo-700 underline" href="/console" prefetch={false}>
            Open the console
          </Link>{" "}
          to manage workspaces, applications and users. The first time, create the first operator with the one-time setup link the server printed
          in its log when it started (a new link is printed at each start until then).
        </p>
      </section>

      <p className="mt-8 text-sm text-slate-600">
        Integrating an application? Read <span className="font-mono">docs/integration.md</span> in the repository: its code is the demo
        application&apos;s.
      </p>
    </main>
  );
}
