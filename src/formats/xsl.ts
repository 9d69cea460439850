/**
 * The browser view: an XSLT 1.0 stylesheet, served at /sitemap.xsl and linked from every sitemap by
 * `<?xml-stylesheet type="text/xsl" href="/sitemap.xsl"?>`, that turns the index and the urlsets
 * (news sitemaps included) into a readable HTML page. Crawlers ignore the processing instruction;
 * the XML stays the same valid document.
 *
 * Values reach the page only through `xsl:value-of` and attribute value templates, which the XSLT
 * processor escapes for HTML: a `&` or a quote in a URL is shown and linked as written. No
 * `disable-output-escaping`, no script.
 */
import { Fingerprint } from "../core/fingerprint.ts";

export const SITEMAP_XSL = `<?xml version="1.0" encoding="UTF-8"?>
<xsl:stylesheet version="1.0"
  xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
  xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"
  xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"
  xmlns:video="http://www.google.com/schemas/sitemap-video/1.1"
  xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"
  xmlns:xhtml="http://www.w3.org/1999/xhtml"
  exclude-result-prefixes="sm image video news xhtml">
  <xsl:output method="html" encoding="UTF-8" indent="yes" doctype-system="about:legacy-compat"/>

  <xsl:template match="/">
    <html lang="en">
      <head>
        <meta charset="utf-8"/>
        <meta name="viewport" content="width=device-width, initial-scale=1"/>
        <meta name="robots" content="noindex"/>
        <title>
          <xsl:choose>
            <xsl:when test="sm:sitemapindex">Sitemap index</xsl:when>
            <xsl:when test="sm:urlset/sm:url/news:news">News sitemap</xsl:when>
            <xsl:otherwise>Sitemap</xsl:otherwise>
          </xsl:choose>
        </title>
        <style>
          :root { color-scheme: light dark; --muted: #667085; --line: #d0d5dd; --accent: #1d4ed8; }
          body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; padding: 2rem clamp(1rem, 4vw, 3rem); }
          header { margin-bottom: 1.5rem; }
          h1 { font-size: 1.6rem; margin: 0 0 .25rem; }
          p { margin: .25rem 0; color: var(--muted); }
          a { color: var(--accent); text-decoration: none; word-break: break-all; }
          a:hover { text-decoration: underline; }
          table { border-collapse: collapse; width: 100%; }
          th, td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
          th { font-size: .8rem; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
          td.n, th.n { text-align: right; color: var(--muted); width: 3.5rem; }
          td.date { white-space: nowrap; }
          .tag { display: inline-block; font-size: .75rem; border: 1px solid var(--line); border-radius: 999px; padding: 0 .5rem; margin: 0 .25rem .15rem 0; color: var(--muted); }
          /* A phone: each row stacked, the URL on a line of its own and the rest wrapping under it (as src/formats/view/page.ts). */
          @media (max-width: 40rem) {
            body { padding: 1rem; overflow-wrap: anywhere; }
            table, tbody, tr { display: block; width: 100%; }
            thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
            tr { display: flex; flex-wrap: wrap; gap: .15rem .75rem; padding: .5rem 0; border-bottom: 1px solid var(--line); }
            th, td { display: block; padding: 0; border: 0; min-width: 0; }
            tbody td:nth-child(2) { flex: 1 1 calc(100% - 3.5rem); }
            tbody td:first-child { flex: 0 0 2.75rem; }
            tbody td:empty { display: none; }
            td.n, td.date { white-space: normal; text-align: left; width: auto; }
          }
        </style>
      </head>
      <body>
        <xsl:apply-templates select="sm:sitemapindex | sm:urlset"/>
      </body>
    </html>
  </xsl:template>

  <xsl:template match="sm:sitemapindex">
    <header>
      <h1>Sitemap index</h1>
      <p id="summary">This index lists <strong id="count"><xsl:value-of select="count(sm:sitemap)"/></strong> sitemaps.
        Search engines read the XML; this page is for people.</p>
    </header>
    <table id="sitemaps">
      <thead><tr><th class="n">#</th><th>Sitemap</th><th>Last modified</th></tr></thead>
      <tbody>
        <xsl:for-each select="sm:sitemap">
          <tr>
            <td class="n"><xsl:value-of select="position()"/></td>
            <td><a href="{sm:loc}"><xsl:value-of select="sm:loc"/></a></td>
            <td class="date"><xsl:value-of select="sm:lastmod"/></td>
          </tr>
        </xsl:for-each>
      </tbody>
    </table>
  </xsl:template>

  <xsl:template match="sm:urlset">
    <header>
      <h1>
        <xsl:choose>
          <xsl:when test="sm:url/news:news">News sitemap</xsl:when>
          <xsl:otherwise>Sitemap</xsl:otherwise>
        </xsl:choose>
      </h1>
      <p id="summary">This sitemap lists <strong id="count"><xsl:value-of select="count(sm:url)"/></strong> URLs.
        <a href="/sitemap.xml">Back to the index</a></p>
    </header>
    <table id="urls">
      <thead><tr><th class="n">#</th><th>URL</th><th>Last modified</th><th>Change frequency</th><th>Priority</th><th>Extensions</th></tr></thead>
      <tbody>
        <xsl:for-each select="sm:url">
          <tr>
            <td class="n"><xsl:value-of select="position()"/></td>
            <td>
              <a href="{sm:loc}"><xsl:value-of select="sm:loc"/></a>
              <xsl:if test="news:news">
                <div class="news"><xsl:value-of select="news:news/news:title"/>
                  (<xsl:value-of select="news:news/news:publication/news:name"/>, <xsl:value-of select="news:news/news:publication_date"/>)</div>
              </xsl:if>
            </td>
            <td class="date"><xsl:value-of select="sm:lastmod"/></td>
            <td><xsl:value-of select="sm:changefreq"/></td>
            <td><xsl:value-of select="sm:priority"/></td>
            <td class="ext">
              <xsl:if test="image:image"><span class="tag images"><xsl:value-of select="count(image:image)"/> images</span></xsl:if>
              <xsl:if test="video:video"><span class="tag videos"><xsl:value-of select="count(video:video)"/> videos</span></xsl:if>
              <xsl:for-each select="xhtml:link[@rel='alternate']">
                <a class="tag hreflang" href="{@href}"><xsl:value-of select="@hreflang"/></a>
              </xsl:for-each>
            </td>
          </tr>
        </xsl:for-each>
      </tbody>
    </table>
  </xsl:template>
</xsl:stylesheet>
`;

export const SITEMAP_XSL_VERSION = new Fingerprint().addString(SITEMAP_XSL).digest();

/** Last-Modified of the stylesheet: the date its text last changed (bump with SITEMAP_XSL). */
export const SITEMAP_XSL_LAST_MODIFIED = Date.UTC(2026, 10, 28);
