/**
 * The console's "Test the connection": an administrator of the workspace starts a test of one of an
 * organization's connections (./begin.ts). The operation's result is where to send the browser and
 * the cookie to set first (app/console/_lib/actions.ts sets it and redirects).
 */
import { z } from "zod";
import { id } from "../../forms/fields";
import { defineOperation, formError } from "../../surfaces/operation";
import { beginConnectionTest, ConnectionTestError, type ConnectionTestStart } from "./begin";

export const testConnection = defineOperation({
  name: "organization.connection_test_started",
  role: "admin",
  input: z.object({ organization_id: id("organization id"), connection_id: id("connection id") }),
  async run(ctx, input) {
    const { operator, workspace } = ctx.access;
    let started: ConnectionTestStart;
    try {
      // Inside the operation's transaction (the embedded database has one connection).
      started = await beginConnectionTest(
        { ...ctx.service, db: ctx.db },
        { workspaceId: workspace.id, organizationId: input.organization_id, connectionId: input.connection_id, tester: ctx.access.portal ? { kind: "organization_portal", id: operator.userId, email: operator.email, back: ctx.access.portal.home } : { kind: "operator", id: operator.userId, email: operator.email } },
      );
    } catch (error) {
      if (error instanceof ConnectionTestError) throw formError(error.message);
      throw error;
    }
    return {
      result: { location: started.location, cookie: started.cookie },
      audit: { target: input.connection_id, data: { organization_id: input.organization_id, connection_id: input.connection_id } },
    };
  },
});
