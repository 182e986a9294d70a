import { Migration } from '@mikro-orm/migrations';

/**
 * `article_term_counts`: articles per account, lexeme of `search_vector` (`term`), site and
 * status, kept by three statement triggers on `articles` like `article_counts` (transition tables;
 * one ordered upsert of the differences per statement: an edit writes only the terms it added or
 * removed, an edit that changes no searched word and no status writes nothing), filled from the
 * rows already there. A search whose query is one word (one lexeme) without a publication range
 * reads its exact `total` here instead of visiting every match in the table: for a common word
 * that visit was most of the statement's time (`repositories.ts`, `searchStatement`).
 * The primary key puts `term` second, so a search of every site (account, term) and of one site
 * (account, term, site) both read a handful of rows. A row whose count fell to 0 stays (a word
 * once used; it reads as 0). Written by hand (transition tables); the entity declares the table
 * and the triggers so the schema diff stays empty.
 */
export class Migration20261128000000_articleTermCounts extends Migration {

  override name = 'Migration20261128000000_articleTermCounts';

  override up(): void | Promise<void> {
    this.addSql(`create table "article_term_counts" ("account_id" varchar(128) not null, "term" text not null, "site_id" varchar(128) not null, "status" varchar(16) not null, "n" bigint not null, primary key ("account_id", "term", "site_id", "status"));`);
    const fn = (name: string, rows: string) => `create or replace function "articles_${name}_fn"() returns trigger as \$\$ begin
  insert into article_term_counts (account_id, term, site_id, status, n)
    select account_id, term, site_id, status, sum(d) from (${rows}) x
    group by 1, 2, 3, 4 having sum(d) <> 0 order by 1, 2, 3, 4
    on conflict (account_id, term, site_id, status) do update set n = article_term_counts.n + excluded.n;
  return null;
end; \$\$ language plpgsql;`;
    const plus = `select account_id, unnest(tsvector_to_array(search_vector)) as term, site_id, status, 1 as d from new_rows`;
    const minus = `select account_id, unnest(tsvector_to_array(search_vector)) as term, site_id, status, -1 as d from old_rows`;
    this.addSql(fn('terms_counted', plus));
    this.addSql(fn('terms_recounted', `${plus} union all ${minus}`));
    this.addSql(fn('terms_uncounted', minus));
    this.addSql(`create trigger "terms_counted" after insert on "articles" referencing new table as new_rows for each statement execute function "articles_terms_counted_fn"();`);
    this.addSql(`create trigger "terms_recounted" after update on "articles" referencing old table as old_rows new table as new_rows for each statement execute function "articles_terms_recounted_fn"();`);
    this.addSql(`create trigger "terms_uncounted" after delete on "articles" referencing old table as old_rows for each statement execute function "articles_terms_uncounted_fn"();`);
    this.addSql(`insert into "article_term_counts" (account_id, term, site_id, status, n)
  select account_id, term, site_id, status, count(*) from "articles", unnest(tsvector_to_array(search_vector)) as term group by 1, 2, 3, 4;`);
  }

  override down(): void | Promise<void> {
    for (const name of ['terms_counted', 'terms_recounted', 'terms_uncounted']) {
      this.addSql(`drop trigger if exists "${name}" on "articles";`);
      this.addSql(`drop function if exists "articles_${name}_fn"();`);
    }
    this.addSql(`drop table if exists "article_term_counts" cascade;`);
  }

}
