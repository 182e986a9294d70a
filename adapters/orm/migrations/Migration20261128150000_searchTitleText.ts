import { Migration } from '@mikro-orm/migrations';
import { TERMS_RECOUNTED_PER_ROW } from './Migration20261128120000_termChangesPerRow.ts';

/** The two search columns' expressions, before and after (`cs_search_plain` in the second). */
const VECTORS = (plain: (column: string) => string) => ({
  search_vector: `setweight(to_tsvector('cs_search'::regconfig, ${plain('title')}), 'A') || setweight(to_tsvector('cs_search'::regconfig, ${plain('target_keyword')}), 'B') || setweight(to_tsvector('cs_search'::regconfig, cs_search_text(body)), 'C')`,
  title_vector: `to_tsvector('cs_search'::regconfig, ${plain('title')})`,
});

/**
 * A title or target keyword that holds text such as `<table>` is searched by its words: the
 * text-search parser reads `<word>` as a tag and drops it, so `cs_search_plain` puts a zero-width
 * space after every `<` first (as `cs_search_text` does for a body's `&lt;`). PostgreSQL before 17
 * cannot change a generated column's expression: both search columns are dropped and added again
 * (which computes them for every row and rewrites the table under an exclusive lock, as adding
 * them did), with their indexes and the trigger that reads `search_vector`; the term counts, which
 * adding a column does not keep, are counted again from the new vectors.
 */
export class Migration20261128150000_searchTitleText extends Migration {

  override name = 'Migration20261128150000_searchTitleText';

  override up(): void | Promise<void> {
    this.addSql(`create function cs_search_plain(t text) returns text language sql immutable strict parallel safe as $$ select replace(t, '<', '<' || chr(8203)) $$;`);
    this.rebuild(VECTORS((column) => `cs_search_plain(${column})`));
  }

  override down(): void | Promise<void> {
    this.rebuild(VECTORS((column) => column));
    this.addSql(`drop function cs_search_plain(text);`);
  }

  private rebuild(vectors: ReturnType<typeof VECTORS>): void {
    this.addSql(`drop trigger "terms_recounted" on "articles";`);
    this.addSql(`alter table "articles" drop column "search_vector", drop column "title_vector";`);
    this.addSql(`alter table "articles" add column "search_vector" tsvector generated always as (${vectors.search_vector}) stored, add column "title_vector" tsvector generated always as (${vectors.title_vector}) stored;`);
    this.addSql(`create index "articles_search_index" on "articles" using gin ("search_vector");`);
    this.addSql(`create index "articles_title_search_index" on "articles" using gin ("title_vector");`);
    this.addSql(`${TERMS_RECOUNTED_PER_ROW};`);
    this.addSql(`delete from "article_term_changes";`);
    this.addSql(`delete from "article_term_counts";`);
    this.addSql(`insert into "article_term_counts" (account_id, term, site_id, status, n)
  select account_id, term, site_id, status, count(*) from "articles", unnest(tsvector_to_array(search_vector)) as term group by 1, 2, 3, 4;`);
  }

}
