By_zero_pointJ
Å&g˜zC¶Wé