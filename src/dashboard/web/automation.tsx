/**
 * Automation: rules, webhooks, mail accounts and watched folders, one tab each under #/automation
 * (#/automation/rules, /webhooks, /mail, /watched). Each tab is its own module; this one only
 * chooses between them.
 */
import { AutomationMail } from "./automation-mail.tsx";
import { AutomationRules } from "./automation-rules.tsx";
import { AutomationWatched } from "./automation-watched.tsx";
import { AutomationWebhooks } from "./automation-webhooks.tsx";

const TABS = [
  { id: "rules", label: "Rules" },
  { id: "webhooks", label: "Webhooks" },
  { id: "mail", label: "Mail accounts" },
  { id: "watched", label: "Watched folders" },
] as const;

export function Automation({ hash }: { hash: string }) {
  const tab = TABS.find((t) => hash === `#/automation/${t.id}`)?.id ?? "rules";
  return (
    <section aria-labelledby="automation-title" class="automation">
      <h1 id="automation-title" tabIndex={-1}>Automation</h1>
      <nav aria-label="Automation" class="tabs">
        {TABS.map((t) => (
          <a key={t.id} href={`#/automation/${t.id}`} aria-current={tab === t.id ? "page" : undefined}>
            {t.label}
          </a>
        ))}
      </nav>
      {tab === "rules" ? <AutomationRules /> : tab === "webhooks" ? <AutomationWebhooks /> : tab === "mail" ? <AutomationMail /> : <AutomationWatched />}
    </section>
  );
}
