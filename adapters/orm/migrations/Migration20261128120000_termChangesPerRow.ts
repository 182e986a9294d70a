import { Migration } from '@mikro-orm/migrations';
import { recounted, SUMMED } from './Migration20261128100000_termChangesByDiff.ts';

/**
 * The term changes of an update are appended by a row trigger instead of a statement trigger: for
 * each updated article whose searched words, status, site or account changed (the trigger's
 * `WHEN`, so an update that changes none of them runs no function at all), the words its new
 * vector has and its old lacks (+1) and the reverse (-1), taken with `ts_delete`, or its two vectors
 * whole when the article moved to another status, site or account. The statement trigger read both
 * transition tables back in three statements for the one row every edit updates; this costs an edit
 * about half as much (`docs/benchmarks.md`). Every update the service makes changes one article;
 * an update of many rows by hand appends two rows per article, which housekeeping folds into the
 * counts like any others. What the rows mean is unchanged: a term's count is the sum of `d` over the
 * rows whose `terms` hold it.
 */
export class Migration20261128120000_termChangesPerRow extends Migration {

  override name = 'Migration20261128120000_termChangesPerRow';

  override up(): void | Promise<void> {
    this.addSql(`drop trigger "terms_recounted" on "articles";`);
    this.addSql(recounted(`if old.account_id = new.account_id and old.site_id = new.site_id and old.status = new.status then
    insert into article_term_changes (account_id, site_id, status, terms, d)
      select new.account_id, new.site_id, new.status, terms, d from (values
        (tsvector_to_array(ts_delete(new.search_vector, tsvector_to_array(old.search_vector))), 1),
        (tsvector_to_array(ts_delete(old.search_vector, tsvector_to_array(new.search_vector))), -1)) v(terms, d)
      where cardinality(terms) > 0;
  else
    insert into article_term_changes (account_id, site_id, status, terms, d)
      select account_id, site_id, status, terms, d from (values
        (new.account_id, new.site_id, new.status, tsvector_to_array(new.search_vector), 1),
        (old.account_id, old.site_id, old.status, tsvector_to_array(old.search_vector), -1)) v(account_id, site_id, status, terms, d)
      where cardinality(terms) > 0;
  end if;`));
    this.addSql(`${TERMS_RECOUNTED_PER_ROW};`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger "terms_recounted" on "articles";`);
    this.addSql(recounted(SUMMED));
    this.addSql(`create trigger "terms_recounted" after update on "articles" referencing old table as old_rows new table as new_rows for each statement execute function "articles_terms_recounted_fn"();`);
  }

}

/** The row trigger, as the entity declares it (`entities.ts`) and PostgreSQL prints it back. */
export const TERMS_RECOUNTED_PER_ROW = `create trigger "terms_recounted" after update on "articles" for each row when (old.search_vector is distinct from new.search_vector or old.status is distinct from new.status or old.site_id is distinct from new.site_id or old.account_id is distinct from new.account_id) execute function "articles_terms_recounted_fn"()`;
