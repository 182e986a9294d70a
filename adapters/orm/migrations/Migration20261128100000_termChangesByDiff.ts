import { Migration } from '@mikro-orm/migrations';

/**
 * An edit of one article appends its term changes without taking its two vectors apart. The update
 * trigger of `article_term_counts` (migration articleTermCounts) unnested both vectors of every
 * updated row into one row per lexeme, summed them per lexeme and gathered them back into arrays:
 * for a PUT of an 80-word body, about 160 rows grouped twice, a third of what keeping search cost
 * the PUT (`docs/benchmarks.md`). A statement that updates one row (every edit, restore and merge)
 * now takes the lexemes the new vector has and the old lacks, and the reverse, with `ts_delete`
 * (each one pass over two sorted lists, in C) and appends them as they come: the same two rows
 * (+1 and -1) as before, or one vector whole at each side when the article's account, site or
 * status moved. A statement of several rows (imports, rewrites) keeps the summed form, so a large
 * statement still appends a handful of rows. What the rows mean, and everything that reads or
 * folds them, is unchanged: a term's count is the sum of `d` over the rows whose `terms` hold it.
 */
export class Migration20261128100000_termChangesByDiff extends Migration {

  override name = 'Migration20261128100000_termChangesByDiff';

  override up(): void | Promise<void> {
    this.addSql(recounted(`if (select count(*) from (select 1 from new_rows limit 2) two) = 1 then
    insert into article_term_changes (account_id, site_id, status, terms, d)
      select account_id, site_id, status, terms, d from (
        select n.account_id, n.site_id, n.status,
          tsvector_to_array(case when s.same then ts_delete(n.search_vector, tsvector_to_array(o.search_vector)) else n.search_vector end) as terms, 1 as d
        from new_rows n, old_rows o, lateral (select o.id = n.id and o.account_id = n.account_id and o.site_id = n.site_id and o.status = n.status as same) s
        union all
        select o.account_id, o.site_id, o.status,
          tsvector_to_array(case when s.same then ts_delete(o.search_vector, tsvector_to_array(n.search_vector)) else o.search_vector end), -1
        from new_rows n, old_rows o, lateral (select o.id = n.id and o.account_id = n.account_id and o.site_id = n.site_id and o.status = n.status as same) s
      ) x where cardinality(terms) > 0;
  else
    ${SUMMED}
  end if;`));
  }

  override down(): void | Promise<void> {
    this.addSql(recounted(SUMMED));
  }

}

/** The summed form (migration articleTermCounts): every lexeme of every row, +1 new and -1 old, summed, gathered by difference. */
export const SUMMED = `insert into article_term_changes (account_id, site_id, status, terms, d)
    select account_id, site_id, status, array_agg(term order by term), d from (
      select account_id, term, site_id, status, sum(d) as d from (select account_id, unnest(tsvector_to_array(search_vector)) as term, site_id, status, 1 as d from new_rows union all select account_id, unnest(tsvector_to_array(search_vector)) as term, site_id, status, -1 as d from old_rows) x
      group by 1, 2, 3, 4 having sum(d) <> 0
    ) y group by account_id, site_id, status, d;`;

export const recounted = (body: string) => `create or replace function "articles_terms_recounted_fn"() returns trigger as $$ begin
  ${body}
  return null;
end; $$ language plpgsql;`;
