import { Migration } from '@mikro-orm/migrations';
import { LOCK_WRITES } from './Migration20261129200000_searchTextPunctuation.ts';

/** `cs_search_plain` (the core's `searchPlainText`), with soft hyphens left out first or not. */
const SEARCH_PLAIN = (text: string) => `create or replace function cs_search_plain(t text) returns text language sql immutable strict parallel safe as $$ select regexp_replace(${text}, '[!-/:-@[-\`{-~]', '\\&' || chr(8203), 'g') $$;`;

/**
 * A soft hyphen (`pomo&shy;doro`, shown only where a line breaks) is left out of the searched
 * text of a title, a target keyword and a body (the core's `searchPlainText`, which also writes a
 * query's terms): PGlite's parser read it as part of a word (*pomo­doro*, which `pomodoro` did not
 * find, nor `pomo`), PostgreSQL's under a UTF-8 locale and the memory store as a space (`pomo`
 * found it, `pomodoro` did not). Every article's stored search vectors are computed again by
 * rewriting its row as it is (the term counts follow through their trigger): one pass over the
 * table, as the earlier searched-text migrations did.
 */
export class Migration20261129220000_searchSoftHyphen extends Migration {

  override name = 'Migration20261129220000_searchSoftHyphen';

  override up(): void | Promise<void> {
    this.addSql(LOCK_WRITES);
    this.addSql(SEARCH_PLAIN(`replace(t, chr(173), '')`));
    this.addSql(`update "articles" set "title" = "title", "target_keyword" = "target_keyword", "body" = "body";`);
  }

  override down(): void | Promise<void> {
    this.addSql(LOCK_WRITES);
    this.addSql(SEARCH_PLAIN('t'));
    this.addSql(`update "articles" set "title" = "title", "target_keyword" = "target_keyword", "body" = "body";`);
  }

}
