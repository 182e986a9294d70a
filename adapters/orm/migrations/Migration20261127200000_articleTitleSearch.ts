import { Migration } from '@mikro-orm/migrations';

/**
 * The title alone as a search vector, with its own GIN index: search ranks a title that matches
 * the whole query first, and finds that tier from this small index (a few hundred rows for a
 * common word) instead of testing every match's stored vector. When the titles already fill the
 * page, the body-only matches are only counted, never read and ranked (`repositories.ts`,
 * `searchStatement`). A stored generated column like `search_vector`: recomputed in the statement
 * of every write, so a changed title is in its tier when the change commits. Without weights, a
 * word's `@@` on this index needs no recheck. Adding the column rewrites the table under an
 * exclusive lock (about 20 s for the search bench's 100 000 short articles on a loaded machine).
 * Written by hand (the entity declares the column and index so the schema diff stays empty).
 */
export class Migration20261127200000_articleTitleSearch extends Migration {

  override name = 'Migration20261127200000_articleTitleSearch';

  override up(): void | Promise<void> {
    this.addSql(`alter table "articles" add column "title_vector" tsvector generated always as (to_tsvector('cs_search'::regconfig, title)) stored;`);
    this.addSql(`create index "articles_title_search_index" on "articles" using gin ("title_vector");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "articles_title_search_index";`);
    this.addSql(`alter table "articles" drop column "title_vector";`);
  }

}
