import { Migration } from '@mikro-orm/migrations';

/**
 * Writes to the articles wait until the migration commits (reads go on): a row another instance
 * inserted or edited while the migration ran would otherwise keep search vectors computed the old
 * way (its statement had read the functions and the configuration before they changed, and the
 * rewrite below does not see it), and nothing computes them again until it is edited.
 */
export const LOCK_WRITES = `lock table "articles" in share row exclusive mode;`;

/** `cs_search_text` with `plain` around the decoded text (the core's `searchTextOfHtml`). */
const SEARCH_TEXT = (lt: string, amp: string, plain: (text: string) => string) => `create or replace function cs_search_text(body text) returns text language sql immutable strict parallel safe as $$
  select ${plain(`translate(
    replace(replace(replace(replace(replace(
      regexp_replace(
        regexp_replace(left(body, 200000), '</?(?:address|article|aside|blockquote|br|caption|dd|details|div|dl|dt|figcaption|figure|footer|h1|h2|h3|h4|h5|h6|header|hr|img|li|main|ol|p|pre|section|summary|table|tbody|td|tfoot|th|thead|tr|ul)(?:[\\t\\n\\f\\r /][^>]*)?>', ' ', 'gi'),
        '<[^>]*>', '', 'g'),
      '&lt;', ${lt}), '&gt;', '>'), '&nbsp;', chr(160)), '&quot;', '"'), '&amp;', ${amp}),
    chr(64976) || chr(64977), '  ')`)}
$$;`;

/** `cs_search_plain`: every ASCII punctuation character followed by a zero-width space (the core's `searchPlainText`), or only `<` (before). */
const SEARCH_PLAIN = (pattern: string) => `create or replace function cs_search_plain(t text) returns text language sql immutable strict parallel safe as $$ select regexp_replace(t, '${pattern}', '\\&' || chr(8203), 'g') $$;`;

/**
 * Every ASCII punctuation character of a title, a target keyword and a body's text is followed by
 * a zero-width space in the searched text (the core's `searchPlainText`), and the query's terms are
 * written so too (`searchDatabaseQuery`): the text-search parser read `example.com/path`,
 * `</script>` (`/script`), `node.js`, `jane@example.com`, `2.0`, `-5` or `co-operation` as tokens
 * of their own, indexed whole, so `path`, `script`, `node`, `jane`, `2` or `5` did not find them,
 * and a phrase that ended inside a hyphenated word (`"a well"` of *a well-known*) did not match;
 * the memory store found all of them. The query is no longer passed through `cs_search_plain`
 * (the service writes it). Every article's stored `search_vector` and `title_vector` are computed
 * again by rewriting its row as it is (the term counts follow through their trigger): one pass
 * over the table, as the earlier searched-text migrations did.
 */
export class Migration20261129200000_searchTextPunctuation extends Migration {

  override name = 'Migration20261129200000_searchTextPunctuation';

  override up(): void | Promise<void> {
    this.addSql(LOCK_WRITES);
    this.addSql(SEARCH_PLAIN('[!-/:-@[-`{-~]'));
    this.addSql(SEARCH_TEXT(`'<'`, `'&'`, (text) => `cs_search_plain(${text})`));
    this.addSql(`update "articles" set "title" = "title", "target_keyword" = "target_keyword", "body" = "body";`);
  }

  override down(): void | Promise<void> {
    this.addSql(LOCK_WRITES);
    this.addSql(SEARCH_PLAIN('<'));
    this.addSql(SEARCH_TEXT(`'<' || chr(8203)`, `'&' || chr(8203)`, (text) => text));
    this.addSql(`update "articles" set "title" = "title", "target_keyword" = "target_keyword", "body" = "body";`);
  }

}
