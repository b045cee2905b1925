/**
 * Where the appliance may connect, per purpose: the link crawler, webhook deliveries and mail
 * intake, over one shared set of rules (url-policy.ts's checkAddress: public unicast only, the
 * cloud metadata addresses never). One allow-list (the crawler's) opens ranges to all three
 * unless webhooks or mail are given a list of their own; then opening loopback for a webhook
 * receiver on the appliance's host does not let a user's saved link read the same address.
 * Refusals name the setting that would open the address or port.
 */
import { checkAddress, type AddressVerdict, type AllowedCidr } from "./url-policy.ts";

export type EgressPurpose = "links" | "webhooks" | "mail";

export interface EgressPolicy {
  /** Who is connected to, for messages: "the crawler", "webhook receivers", "mail servers". */
  reaches: string;
  /** Ranges reachable whatever their kind (loopback, private, ...): the purpose's own setting. */
  allowCidrs: readonly AllowedCidr[];
  /** Ports a URL may name (the scheme's default counts as named); null = any. */
  ports: readonly number[] | null;
  /** The settings that open more, named in refusals. */
  cidrSetting: string;
  portSetting: string | null;
  /** Every loopback and private range open: tests against servers on loopback only, never a setting. */
  allowPrivate?: boolean;
}

/** The settings of each purpose (the Config has them; this toolkit does not import it). */
export interface EgressSettings {
  linkAllowCidrs: readonly AllowedCidr[];
  linkPorts: readonly number[] | null;
  /** null: the crawler's list. */
  webhookAllowCidrs: readonly AllowedCidr[] | null;
  webhookPorts: readonly number[] | null;
  /** null: the crawler's list. */
  mailAllowCidrs: readonly AllowedCidr[] | null;
}

export function egressPolicy(config: EgressSettings, purpose: EgressPurpose): EgressPolicy {
  switch (purpose) {
    case "links":
      return { reaches: "the crawler", allowCidrs: config.linkAllowCidrs, ports: config.linkPorts, cidrSetting: "MEDIABOX_LINK_ALLOW_CIDRS", portSetting: "MEDIABOX_LINK_PORTS" };
    case "webhooks":
      return { reaches: "webhook receivers", allowCidrs: config.webhookAllowCidrs ?? config.linkAllowCidrs, ports: config.webhookPorts, cidrSetting: "MEDIABOX_WEBHOOK_ALLOW_CIDRS", portSetting: "MEDIABOX_WEBHOOK_PORTS" };
    case "mail":
      // A mail server listens where its administrator says (993, 143, 1143...): any port.
      return { reaches: "mail servers", allowCidrs: config.mailAllowCidrs ?? config.linkAllowCidrs, ports: null, cidrSetting: "MEDIABOX_MAIL_ALLOW_CIDRS", portSetting: null };
  }
}

/** Ranges an administrator may open (also when written IPv4-mapped): their refusal names the setting that does. */
const OPENABLE = /\((?:IPv4-mapped [^,()]*, )?(loopback|private|link-local|unique-local|carrier-grade NAT|site-local|reserved)\)$/;

/** Whether the policy lets a connection go to `ip`; a refusal an allow-list could lift says which setting. */
export function checkEgressAddress(policy: EgressPolicy, ip: string): AddressVerdict {
  const verdict = checkAddress(ip, { allowPrivate: policy.allowPrivate === true, allowCidrs: policy.allowCidrs });
  if (verdict.ok || !OPENABLE.test(verdict.reason)) return verdict;
  return { ok: false, reason: `${verdict.reason}; ${policy.cidrSetting} lists the ranges ${policy.reaches} may reach` };
}

/** Whether the policy lets a connection go to the URL's port (its scheme's default when it names none). */
export function checkEgressPort(policy: EgressPolicy, url: URL): AddressVerdict {
  if (!policy.ports) return { ok: true };
  const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
  if (policy.ports.includes(port)) return { ok: true };
  return { ok: false, reason: `port ${port} is not allowed (${policy.portSetting} allows ${policy.ports.join(", ")})` };
}
