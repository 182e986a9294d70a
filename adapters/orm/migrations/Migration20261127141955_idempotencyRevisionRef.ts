import { Migration } from '@mikro-orm/migrations';

/**
 * An idempotency key keeps a reference to the revision its answer names instead of the article's
 * body (`src/idempotency.ts`): a record stays within a few KiB whatever the article's size. Rows
 * made before keep their whole answer and are replayed as they are. Generated from the entities
 * (the generated `down` also rebuilt the partitioned activity table, a false diff; dropped by hand).
 */
export class Migration20261127141955_idempotencyRevisionRef extends Migration {

  override name = 'Migration20261127141955_idempotencyRevisionRef';

  override up(): void | Promise<void> {
    this.addSql(`alter table "idempotency_keys" add "revision_article_id" varchar(128) null, add "revision_number" int null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "idempotency_keys" drop column "revision_article_id", drop column "revision_number";`);
  }

}
