BXJP¶O†bl-VRהEÿַ°¾B4־ûdÊ}Dִ¡3‎gף4ף^
ÛFR%ֽ³qCר־£|ÿûqEְgµTןy†ֱRc­נאר	‚fGתטO