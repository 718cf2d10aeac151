/** ABI: the weight strategies (owned by the weights work; see issue #2). */
