import { Migration } from '@mikro-orm/migrations';
import { LOCK_WRITES } from './Migration20261129200000_searchTextPunctuation.ts';

/** `cs_search_plain` (the core's `searchPlainText`), with soft hyphens left out first or not. */
const SEARCH_PLAIN = (text: string) => `create or replace function cs_search_plain(t text) returns text language sql immutable strict parallel safe as $$ select regexp_replace(${text}, '[!-/:-@[-\`{-~]', '\\&' || chr(8203), 'g') $$;`;

/** Rewrites, as they are, the articles whose title, target keyword or body holds a soft hyphen. */
const REWRITE_HOLDERS = `update "articles" set "title" = "title", "target_keyword" = "target_keyword", "body" = "body" where strpos("title", chr(173)) > 0 or strpos("target_keyword", chr(173)) > 0 or strpos("body", chr(173)) > 0;`;

/**
 * A soft hyphen (`pomo&shy;doro`, shown only where a line breaks) is left out of the searched
 * text of a title, a target keyword and a body (the core's `searchPlainText`, which also writes a
 * query's terms): PGlite's parser read it as part of a word (*pomo­doro*, which `pomodoro` did not
 * find, nor `pomo`), PostgreSQL's under a UTF-8 locale and the memory store as a space (`pomo`
 * found it, `pomodoro` did not). The stored search vectors of the articles that hold one (a
 * stored body keeps it as the character, the core's serialiser writing no `&shy;`) are computed
 * again by rewriting their rows as they are (the term counts follow through their trigger): one
 * read of the table, and only those rows written, not every article as the earlier searched-text
 * migrations did.
 */
export class Migration20261129220000_searchSoftHyphen extends Migration {

  override name = 'Migration20261129220000_searchSoftHyphen';

  override up(): void | Promise<void> {
    this.addSql(LOCK_WRITES);
    this.addSql(SEARCH_PLAIN(`replace(t, chr(173), '')`));
    this.addSql(REWRITE_HOLDERS);
  }

  override down(): void | Promise<void> {
    this.addSql(LOCK_WRITES);
    this.addSql(SEARCH_PLAIN('t'));
    this.addSql(REWRITE_HOLDERS);
  }

}
