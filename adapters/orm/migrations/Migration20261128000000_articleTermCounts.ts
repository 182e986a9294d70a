import { Migration } from '@mikro-orm/migrations';

/**
 * The exact `total` of a one-word search without reading its matches: articles per account,
 * lexeme of `search_vector` (`term`), site and status, in two tables kept by statement triggers on
 * `articles` (transition tables) in the transaction of every change, filled from the rows already
 * there. A search whose query is one lexeme (and no publication range) adds up the term's rows of
 * both (`repositories.ts`, `searchStatement`); for a common word, visiting every match in the
 * table to count it was most of the statement's time.
 *
 * - `article_term_counts` (account, term, site, status, n): inserts and deletes (imports) add their
 *   terms here, one ordered upsert of the sums per statement, like `article_counts`. The primary
 *   key puts `term` second: a search of every site (account, term) and of one site (account, term,
 *   site) both read a handful of rows. A row whose count fell to 0 stays (it reads as 0).
 * - `article_term_changes` (account, site, status, terms[], d): an update (an edit) appends the
 *   terms it added (+1) and removed (-1) as arrays, one row per account, site, status and
 *   difference: at most two rows for an edit of one article, whatever the number of words it
 *   changed, where an upsert of every changed term cost a PUT that rewrote a body more than a
 *   quarter of its time (about 160 rows). An edit that changes no searched word and no status
 *   appends nothing. Housekeeping folds these rows into `article_term_counts` (`housekeeping.ts`),
 *   so an account's rows here are its edits since the last run (at most 200 a day by the daily
 *   limit, the platform's rewrites aside), read by the account index.
 *
 * Written by hand (transition tables); the entities declare the tables and triggers so the schema
 * diff stays empty.
 */
export class Migration20261128000000_articleTermCounts extends Migration {

  override name = 'Migration20261128000000_articleTermCounts';

  override up(): void | Promise<void> {
    this.addSql(`create table "article_term_counts" ("account_id" varchar(128) not null, "term" text not null, "site_id" varchar(128) not null, "status" varchar(16) not null, "n" bigint not null, primary key ("account_id", "term", "site_id", "status"));`);
    this.addSql(`create table "article_term_changes" ("id" bigserial primary key, "account_id" varchar(128) not null, "site_id" varchar(128) not null, "status" varchar(16) not null, "terms" text[] not null, "d" bigint not null);`);
    this.addSql(`create index "article_term_changes_account_id_index" on "article_term_changes" ("account_id");`);
    const terms = (rows: string, d: number) => `select account_id, unnest(tsvector_to_array(search_vector)) as term, site_id, status, ${d} as d from ${rows}`;
    const counted = (rows: string) => `insert into article_term_counts (account_id, term, site_id, status, n)
    select account_id, term, site_id, status, sum(d) from (${rows}) x
    group by 1, 2, 3, 4 having sum(d) <> 0 order by 1, 2, 3, 4
    on conflict (account_id, term, site_id, status) do update set n = article_term_counts.n + excluded.n;`;
    const fn = (name: string, body: string) => `create or replace function "articles_${name}_fn"() returns trigger as \$\$ begin
  ${body}
  return null;
end; \$\$ language plpgsql;`;
    this.addSql(fn('terms_counted', counted(terms('new_rows', 1))));
    this.addSql(fn('terms_recounted', `insert into article_term_changes (account_id, site_id, status, terms, d)
    select account_id, site_id, status, array_agg(term order by term), d from (
      select account_id, term, site_id, status, sum(d) as d from (${terms('new_rows', 1)} union all ${terms('old_rows', -1)}) x
      group by 1, 2, 3, 4 having sum(d) <> 0
    ) y group by account_id, site_id, status, d;`));
    this.addSql(fn('terms_uncounted', counted(terms('old_rows', -1))));
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
    this.addSql(`drop table if exists "article_term_changes" cascade;`);
    this.addSql(`drop table if exists "article_term_counts" cascade;`);
  }

}
