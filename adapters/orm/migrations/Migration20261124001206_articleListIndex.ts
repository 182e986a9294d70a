import { Migration } from '@mikro-orm/migrations';

/**
 * A site's article list in its own order (`published_at desc nulls last, id`), with the account and
 * status beside each entry: a page far down (`OFFSET`) is found by an index-only scan, and only its
 * rows are read from the table (the deferred join in `src/repositories.ts`). Generated from the
 * entities.
 */
export class Migration20261124001206_articleListIndex extends Migration {

  override name = 'Migration20261124001206_articleListIndex';

  override up(): void | Promise<void> {
    this.addSql(`drop index "articles_site_published_index";`);
    this.addSql(`create index "articles_site_list_index" on "articles" ("site_id", "published_at" DESC nulls LAST, "id") include ("account_id", "status");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "articles_site_list_index";`);
    this.addSql(`create index "articles_site_published_index" on "articles" ("site_id", "published_at", "id");`);
  }

}
