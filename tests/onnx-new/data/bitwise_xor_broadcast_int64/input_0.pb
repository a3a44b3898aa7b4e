BAJ@-wd†m¢¾§IïW«lwá=¬YÍˆz±mCm>eeÈ«PÖmØ[n)†s<ÞÛ‚?ÕÊ{út
G