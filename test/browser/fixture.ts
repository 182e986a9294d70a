/** The browser tests' own account, imported next to the demo data so every assertion is exact. */
export const WEB_EMAIL = "web-tester@example.com"
export const WEB_PASSWORD = "correct horse battery staple"

const protectedBody =
  '<h2>Why roses</h2><p>Roses like sun and good soil.</p>' +
  '<p>Our partner <a href="https://partner.test/roses" data-service-protected="backlink" rel="nofollow">partner roses</a> helps, ' +
  'and so does <a href="https://garden.test/soil" data-service-protected="internal">our soil guide</a>.</p>' +
  '<ul><li>Water in the morning</li><li>Prune in spring</li></ul>'

/** Import-format data: one account, one site, three articles, three backlinks. */
export const webFixture = {
  accounts: [
    {
      id: "acc_web",
      email: WEB_EMAIL,
      password: WEB_PASSWORD,
      name: "Wendy Editor",
      sites: [
        {
          id: "site_web",
          name: "Rose Garden",
          url: "https://garden.test",
          articles: [
            {
              id: "art_roses",
              title: "Growing roses",
              url: "https://garden.test/roses",
              status: "published",
              published_at: new Date(Date.now() - 2 * 86_400_000).toISOString(),
              "target keyword": "growing roses",
              body: protectedBody,
            },
            {
              id: "art_tulips",
              title: "Tulips in pots",
              url: "https://garden.test/tulips",
              status: "published",
              published_at: "2026-09-15T09:00:00Z",
              "target keyword": "tulips",
              body: "<p>Tulips are easy.</p>",
            },
            { id: "art_draft", title: "Autumn draft", url: "https://garden.test/autumn", status: "draft", "target keyword": "autumn", body: "<p>Later.</p>" },
          ],
          backlinks: [
            { id: "bl_w1", date_acquired: new Date().toISOString().slice(0, 10), source_domain: "news.test", source_url: "https://news.test/p", target_url: "https://garden.test/roses", anchor_text: "roses", anchor_type: "exact", category: "industry" },
            { id: "bl_w2", date_acquired: "2026-09-01", source_domain: "town.test", source_url: "https://town.test/p", target_url: "https://garden.test/", anchor_text: "garden", anchor_type: "brand", category: "local" },
          ],
        },
      ],
    },
  ],
}
