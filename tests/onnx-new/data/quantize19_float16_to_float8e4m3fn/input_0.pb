
BxJvÆñCnÅ@…ÅôÈHÈ\J?Ê!ÄsCC]HH