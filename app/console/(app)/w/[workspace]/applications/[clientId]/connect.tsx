import type { ReactNode } from "react";
import { Card } from "@/components/ui/card";
import { ConnectGuide } from "@/components/console/connect-guide";
import { CreatedSecret } from "@/components/console/created-secret";
import { CopyButton } from "@/components/ui/copy-button";
import type { ApiGrantInfo } from "@/lib/authz/model";
import type { ApplicationRow } from "@/lib/console/applications";

/** What the application's code needs: its client id, the issuer, the secret (confidential) and a guide; then `otherIssuers`, the other issuers it may use. */
export function ConnectCard({
  app,
  issuer,
  firstGrant,
  otherIssuers,
}: {
  app: ApplicationRow;
  issuer: string;
  firstGrant: ApiGrantInfo | undefined;
  otherIssuers: ReactNode;
}) {
  const confidential = app.type !== "PUBLIC";
  return (
    <Card id="connect" title="Connect your application" description="What your code needs: the client id, the issuer (discovery finds everything else) and, for confidential applications, the secret.">
      <div className="space-y-4">
        <div className="grid gap-3 lg:grid-cols-2">
          <div className="rounded-md border border-slate-200 p-3">
            <p className="text-sm text-slate-600">Client id</p>
            <div className="mt-1 flex flex-wrap items-center gap-2">
              <code data-testid="client-id" className="break-all font-mono text-sm text-slate-900">
                {app.clientId}
              </code>
              <CopyButton value={app.clientId} label="Copy client id" />
            </div>
          </div>
          {confidential ? (
            <CreatedSecret clientId={app.clientId} />
          ) : (
            <div className="rounded-md border border-slate-200 p-3 text-sm text-slate-600">No client secret: a public application proves itself with PKCE.</div>
          )}
        </div>
        <ConnectGuide
          type={app.type}
          clientId={app.clientId}
          issuer={issuer}
          redirectUri={app.redirectUris[0] ?? null}
          scopes={app.identityScopes}
          api={firstGrant ? { audience: firstGrant.audience, permissions: firstGrant.permissions } : null}
        />
        {otherIssuers}
      </div>
    </Card>
  );
}
