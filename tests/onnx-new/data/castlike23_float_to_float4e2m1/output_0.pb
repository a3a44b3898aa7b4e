BoutputJ Bd†
