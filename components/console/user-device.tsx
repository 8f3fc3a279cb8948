import { Time } from "@/components/ui/time";
import { parseUserAgent } from "@/lib/user-agent";

/** One device a user is signed in on: browser and system from the user agent, when it was last seen, from where. */
export function UserDevice({ userAgent, ip, lastSeenAt, signedInAt, now }: { userAgent: string | null; ip: string | null; lastSeenAt: Date; signedInAt: Date; now: Date }) {
  const device = parseUserAgent(userAgent);
  return (
    <div className="min-w-0 text-sm">
      <div className="font-medium text-slate-900">
        {device.label}
        {device.mobile ? <span className="ml-2 text-xs font-normal text-slate-600">mobile</span> : null}
      </div>
      <div className="text-xs text-slate-600">
        Last seen <Time value={lastSeenAt} now={now} relativeOnly /> · signed in <Time value={signedInAt} now={now} relativeOnly />
        {ip ? ` · from ${ip}` : ""}
      </div>
    </div>
  );
}
