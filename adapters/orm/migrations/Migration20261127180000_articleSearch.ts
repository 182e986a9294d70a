import { Migration } from '@mikro-orm/migrations';

/**
 * Full-text search over articles. `cs_search` is the `simple` configuration (lower case, no
 * stemming: every language alike) with `unaccent` as a filtering dictionary before it, as the
 * PostgreSQL manual shows, so documents, queries and `ts_headline` all ignore accents; `to_tsvector`
 * with a named configuration is immutable, so no wrapper function is needed. `cs_search_text` is
 * the searched text of a body (the core's `searchTextOfHtml`: the first 200 000 characters, tags
 * as spaces, the serialiser's entities decoded, the snippet's mark characters removed).
 * `search_vector` is a stored generated column (title A, target keyword B, body text C): every
 * write of a row, by any path (edits, import, the rewrite job, by hand), recomputes it in the same
 * statement, so a change is searchable when it commits. A GIN index answers `@@`.
 * Written by hand (the entity declares the column and index so the schema diff stays empty).
 */
/** `cs_search_text` as this migration defines it (every tag a space), after `create ` or `create or replace `. */
export const SEARCH_TEXT_FIRST = `function cs_search_text(body text) returns text language sql immutable strict parallel safe as $$
  select translate(
    replace(replace(replace(replace(replace(
      regexp_replace(left(body, 200000), '<[^>]*>', ' ', 'g'),
      '&lt;', '<'), '&gt;', '>'), '&nbsp;', chr(160)), '&quot;', '"'), '&amp;', '&'),
    chr(64976) || chr(64977), '  ')
$$`;

export class Migration20261127180000_articleSearch extends Migration {

  override name = 'Migration20261127180000_articleSearch';

  override up(): void | Promise<void> {
    this.addSql(`create extension if not exists unaccent;`);
    this.addSql(`create text search configuration cs_search (copy = simple);`);
    this.addSql(`alter text search configuration cs_search alter mapping for hword, hword_part, word with unaccent, simple;`);
    this.addSql(`create ${SEARCH_TEXT_FIRST};`);
    this.addSql(`alter table "articles" add column "search_vector" tsvector generated always as (setweight(to_tsvector('cs_search'::regconfig, title), 'A') || setweight(to_tsvector('cs_search'::regconfig, target_keyword), 'B') || setweight(to_tsvector('cs_search'::regconfig, cs_search_text(body)), 'C')) stored;`);
    this.addSql(`create index "articles_search_index" on "articles" using gin ("search_vector");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "articles_search_index";`);
    this.addSql(`alter table "articles" drop column "search_vector";`);
    this.addSql(`drop function cs_search_text(text);`);
    this.addSql(`drop text search configuration cs_search;`);
  }

}
