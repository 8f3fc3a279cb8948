import { SideNav } from "@/components/console/side-nav";
import { WorkspaceSwitcher } from "@/components/console/workspace-switcher";
import { Notice } from "@/components/ui/page-header";
import { roleAtLeast } from "@/lib/console/authz";
import { workspaceNavigation } from "@/lib/console/navigation";
import { listOperatorWorkspaces } from "@/lib/console/workspaces";
import { getService } from "@/lib/service";
import { layoutAccess } from "../../../_lib/session";

export default async function WorkspaceLayout({ children, params }: { children: React.ReactNode; params: Promise<{ workspace: string }> }) {
  const { workspace } = await params;
  const access = await layoutAccess(workspace);
  // Without a live session the page redirects to sign in, returning to its own path.
  if (!access) return <>{children}</>;
  const workspaces = await listOperatorWorkspaces(await getService(), access.operator.userId);
  return (
    <div className="mx-auto max-w-7xl px-4 py-6 lg:flex lg:gap-8">
      <aside className="lg:w-56 lg:shrink-0">
        <WorkspaceSwitcher current={access.workspace} workspaces={workspaces} />
        <SideNav workspaceId={access.workspace.id} sections={workspaceNavigation(roleAtLeast(access.role, "admin"))} />
      </aside>
      <main id="content" className="min-w-0 flex-1 pt-4 lg:pt-0">
        {access.role === "viewer" ? (
          <div className="mb-4">
            <Notice tone="info">You are a viewer in this workspace: you can look at everything but change nothing.</Notice>
          </div>
        ) : null}
        {children}
      </main>
    </div>
  );
}
