By_scaleJ
ף<