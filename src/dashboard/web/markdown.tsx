/**
 * A document's text as Markdown drawn as HTML (headings, lists, emphasis, pipe tables as
 * tables) with markdown-it. Safe by construction rather than by a sanitizer afterwards: raw HTML
 * in the text is escaped (html: false), links with script or data schemes are refused by
 * markdown-it's own link check, and images are not drawn (a document's text must not make the
 * browser fetch anything).
 */
import MarkdownIt from "markdown-it";

const renderer = new MarkdownIt({ html: false, linkify: false, typographer: false }).disable("image");
// Links open outside the dashboard, without handing it the opener.
const defaultLinkOpen = renderer.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
renderer.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  tokens[idx]!.attrSet("target", "_blank");
  tokens[idx]!.attrSet("rel", "noopener noreferrer nofollow");
  return defaultLinkOpen(tokens, idx, options, env, self);
};

export function markdownHtml(text: string): string {
  return renderer.render(text);
}

export function Markdown({ text, label }: { text: string; label: string }) {
  return <div class="markdown" role="document" aria-label={label} dangerouslySetInnerHTML={{ __html: markdownHtml(text) }} />;
}
