import { Migration } from '@mikro-orm/migrations';

/**
 * `article_counts` by (account, site, day), with `n` beside each entry: a date-filtered article
 * list without a status sums the counts of its days over every status, which the primary key
 * (account, site, status, day) cannot narrow to those days, so it read every count row of the site
 * (a row per day of its history and status). With this index it reads only the range's days, in
 * the index alone. An index only: no row is changed. Generated from the entities (the generated
 * `down` also rebuilt the partitioned activity table, a false diff; dropped by hand).
 */
export class Migration20261125164511_articleCountsDayIndex extends Migration {

  override name = 'Migration20261125164511_articleCountsDayIndex';

  override up(): void | Promise<void> {
    this.addSql(`create index "article_counts_site_day_index" on "article_counts" ("account_id", "site_id", "day") include ("n");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "article_counts_site_day_index";`);
  }

}
