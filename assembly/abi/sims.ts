/** ABI: random generation, valuation and simulation (owned by the sims work; see issue #3). */
