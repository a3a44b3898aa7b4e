BimageJÈ
